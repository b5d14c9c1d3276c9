//! The neighbouring relation between datasets, stated explicitly.

use serde::{Deserialize, Serialize};

/// Which pairs of datasets count as neighbours in a privacy guarantee.
///
/// Every sensitivity in dpqr is computed relative to one of these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Neighbouring {
    /// Datasets of the same *public* size `n` that differ in one record (one record
    /// replaced by another). This is the default of seeds 003 (DualQuery) and 004
    /// (chaining / coarse projection). A normalised counting query changes by at most
    /// `1/n`, but a histogram changes in two cells, so its ℓ₁ sensitivity is 2
    /// (twice that of add/remove).
    ReplaceOne,
    /// Datasets that differ by adding or removing one record (the size is private).
    /// A histogram changes in one cell by one.
    AddRemove,
}

impl Neighbouring {
    /// ℓ₁ sensitivity of an (unnormalised) histogram of counts: 2 under replace-one,
    /// 1 under add/remove.
    pub fn histogram_l1_sensitivity(&self) -> u64 {
        match self {
            Neighbouring::ReplaceOne => 2,
            Neighbouring::AddRemove => 1,
        }
    }

    /// Squared ℓ₂ sensitivity of an (unnormalised) histogram of counts: 2 under
    /// replace-one (two cells change by one), 1 under add/remove.
    pub fn histogram_l2_sensitivity_squared(&self) -> u64 {
        match self {
            Neighbouring::ReplaceOne => 2,
            Neighbouring::AddRemove => 1,
        }
    }
}

impl std::fmt::Display for Neighbouring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Neighbouring::ReplaceOne => write!(f, "replace-one"),
            Neighbouring::AddRemove => write!(f, "add/remove"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names() {
        assert_eq!(Neighbouring::ReplaceOne.to_string(), "replace-one");
        assert_eq!(Neighbouring::AddRemove.to_string(), "add/remove");
    }

    #[test]
    fn replace_one_doubles_histogram_l1() {
        assert_eq!(
            Neighbouring::ReplaceOne.histogram_l1_sensitivity(),
            2 * Neighbouring::AddRemove.histogram_l1_sensitivity()
        );
        assert_eq!(
            Neighbouring::ReplaceOne.histogram_l2_sensitivity_squared(),
            2
        );
    }
}
