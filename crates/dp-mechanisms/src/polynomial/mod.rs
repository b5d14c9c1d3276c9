//! Polynomial release (seed 002, Thaler, Ullman and Vadhan 2012): approximate each record's
//! query-answer function by a low-degree polynomial in the query, sum the polynomials over
//! the records, perturb the coefficients, and answer every query of the class by evaluating
//! the noisy polynomial.
//!
//! | module | what |
//! |---|---|
//! | [`approx`] | univariate approximations of symmetric targets (OR, k-of-ℓ) with certified error: the Chebyshev construction and a minimax linear program |
//! | [`lists`] | decision-list databases queried by points: per-list integer expansion of the telescoped list, noise per size, evaluator |
//! | [`release`] | the mechanism: monomial counts in one pass over the records, noise on the coefficients, the evaluator; disjunctions, conjunctions, marginals, k-of-ℓ thresholds |
//!
//! The design, the trade-offs between degree, coefficient norm and error, and measured
//! numbers are in `docs/mechanisms/polynomial.md`.

pub mod approx;
pub mod lists;
pub mod release;

pub use approx::{Construction, LpOptions, SymmetricApprox};
pub use release::{
    Approximation, BitSense, COUNT_STAGE, MonomialPlan, NoisyPolynomial, POLYNOMIAL_CLASSES,
    PolynomialMechanism, PolynomialNoise, PolynomialParams, envelope,
};
