//! The crate's one error type.

use crate::Num;

/// Everything that can go wrong in `dp-core`.
///
/// Every constructor validates its parameters and returns
/// [`CoreError::InvalidParameter`] instead of panicking; accounting that would
/// overspend returns [`CoreError::BudgetExceeded`] before any noise is drawn.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// A parameter is NaN, infinite, negative, zero where zero is meaningless, or
    /// otherwise outside its documented range.
    #[error("invalid parameter {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter's name as in the function signature.
        name: &'static str,
        /// The offending value, formatted.
        value: String,
        /// Why it was rejected.
        reason: String,
    },
    /// A [`crate::Ledger`] refused a spend that would exceed its budget.
    #[error("privacy budget exceeded: spending {requested} on '{label}' does not fit: {budget}")]
    BudgetExceeded {
        /// The label of the refused spend.
        label: String,
        /// The refused loss, formatted (with its charge when it is stated for another
        /// neighbouring relation than the ledger's).
        requested: String,
        /// The ledger's state, formatted: `total budget …, spent …, remaining …` (one
        /// string, so that the error stays small).
        budget: String,
    },
    /// Two privacy losses cannot be combined into one guarantee of the kind asked for
    /// (e.g. (ε, δ)-DP with ρ-zCDP without a δ to convert at).
    #[error("incompatible composition: cannot combine {left} with {right}: {reason}")]
    IncompatibleComposition {
        /// The first loss, formatted.
        left: String,
        /// The second loss, formatted.
        right: String,
        /// Why they do not combine.
        reason: String,
    },
    /// A guarantee stated for one neighbouring relation implies none for another (a
    /// replace-one guarantee says nothing about datasets of different sizes, so it gives
    /// no add/remove guarantee).
    #[error("no conversion of {loss} from {from} to {to} neighbours: {reason}")]
    NoNeighbouringConversion {
        /// The loss, formatted.
        loss: String,
        /// The relation it is stated for.
        from: String,
        /// The relation asked for.
        to: String,
        /// Why no conversion exists.
        reason: String,
    },
    /// A numerical computation overflowed, produced NaN, or could not certify a bound.
    #[error("numerical failure: {what}")]
    Numerical {
        /// What failed.
        what: String,
    },
    /// The result of a composition or conversion is a vacuous guarantee
    /// (e.g. a total δ ≥ 1 or an infinite ε).
    #[error("vacuous privacy guarantee: {what}")]
    Vacuous {
        /// What became vacuous.
        what: String,
    },
    /// The operating system's entropy source failed.
    #[error("entropy source failed: {reason}")]
    Entropy {
        /// The underlying error, formatted.
        reason: String,
    },
    /// The caller asked the computation to stop ([`crate::StopRequest`]), and it stopped at
    /// its next step without finishing. Whatever was charged before stays charged.
    #[error("stopped at the caller's request before the computation finished")]
    Stopped,
}

/// `Result` with [`CoreError`].
pub type Result<T> = std::result::Result<T, CoreError>;

impl CoreError {
    /// Shorthand for [`CoreError::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, value: impl std::fmt::Display, reason: &str) -> Self {
        CoreError::InvalidParameter {
            name,
            value: value.to_string(),
            reason: reason.to_string(),
        }
    }

    /// Shorthand for [`CoreError::Numerical`].
    pub(crate) fn numerical(what: impl Into<String>) -> Self {
        CoreError::Numerical { what: what.into() }
    }
}

/// Checks that `x` is finite and `>= 0`.
pub(crate) fn check_nonneg(name: &'static str, x: f64) -> Result<f64> {
    if x.is_nan() {
        Err(CoreError::invalid(name, Num(x), "must not be NaN"))
    } else if !x.is_finite() {
        Err(CoreError::invalid(name, Num(x), "must be finite"))
    } else if x < 0.0 {
        Err(CoreError::invalid(name, Num(x), "must be >= 0"))
    } else {
        // Normalise -0.0 to +0.0.
        Ok(x + 0.0)
    }
}

/// Checks that `x` is finite and `> 0`.
pub(crate) fn check_positive(name: &'static str, x: f64) -> Result<f64> {
    let x = check_nonneg(name, x)?;
    if x == 0.0 {
        Err(CoreError::invalid(name, Num(x), "must be > 0"))
    } else {
        Ok(x)
    }
}

/// Checks that `x` is in `[0, 1)`.
pub(crate) fn check_delta(name: &'static str, x: f64) -> Result<f64> {
    let x = check_nonneg(name, x)?;
    if x >= 1.0 {
        Err(CoreError::invalid(name, Num(x), "must be in [0, 1)"))
    } else {
        Ok(x)
    }
}
