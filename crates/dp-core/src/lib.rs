//! # dp-core — privacy accounting, exact noise and private selection
//!
//! The bottom layer of dpqr. It knows nothing about queries or data.
//!
//! | module | what it provides |
//! |---|---|
//! | [`error`] | [`CoreError`], [`Result`] |
//! | [`neighbouring`] | [`Neighbouring`]: replace-one (public n; seeds 003/004) or add/remove |
//! | [`loss`] | [`PrivacyLoss`]: pure ε, (ε, δ), ρ-zCDP; validated constructors, conversion, basic composition |
//! | [`conversions`] | the tight zCDP → (ε, δ) conversion of Canonne–Kamath–Steinke and its inverses, rounded safely: [`zcdp_delta`], [`zcdp_epsilon`], [`rho_for_epsilon_delta`], [`pure_to_zcdp`] |
//! | [`composition`] | [`compose_all`] (basic), [`advanced_composition`] and its inverse [`advanced_composition_epsilon0`] (Dwork–Rothblum–Vadhan; seed 003 Lemma 2.4, seed 001 Thm 4) |
//! | [`ledger`] | [`Ledger`] / [`Spend`]: an odometer that refuses to overspend before noise is drawn |
//! | [`samplers`] | exact [`sample_uniform_below`], [`sample_bernoulli_exp`] (and its `u128` form [`sample_bernoulli_exp_ratio`]), [`sample_bernoulli_two_over_e`], [`DiscreteLaplace`], [`DiscreteGaussian`] (CKS 2020) on exact rationals ([`exact_rational`]); continuous [`Laplace`], [`Gaussian`] with the floating-point caveat |
//! | [`exponential`] | [`ExponentialMechanism`] (exact rejection sampling ∝ exp(ε q/(2Δ)); ε-DP, ε²/8-zCDP by bounded range) and [`PermuteAndFlip`] (ε-DP, charged ε²/2-zCDP), [`Selector`] (either); exact Bernoulli coins, exact output distributions for audits |
//! | [`progress`] | [`Progress`]: how far a long stage has got (public round/iteration counts only), for the caller to show; [`StopRequest`]: a caller's request that a long computation stop at its next step |
//! | [`rounding`] | directed rounding of `+ − × ÷ √ exp ln` for accounting; [`rounding::split_down`]: an equal budget split rounded down so that its composition stays within the total |
//! | [`rng`] | [`seeded_rng`], [`os_seeded_rng`], [`stream_rng`]: ChaCha20, no global state |
//!
//! Accounting rounds in the safe direction: every privacy parameter that is reported
//! as spent is an upper bound on the exact value, and every "allowed" parameter (an
//! inverse such as [`rho_for_epsilon_delta`]) is a lower bound.
//!
//! Randomness enters only through `rng: &mut R` with `R: rand::Rng + rand::CryptoRng +
//! ?Sized`, so `&mut dyn rand::CryptoRng` works too.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod composition;
pub mod conversions;
pub mod error;
pub mod exponential;
pub mod format;
pub mod ledger;
pub mod loss;
pub mod neighbouring;
pub mod progress;
pub mod rng;
pub mod rounding;
pub mod samplers;

pub use composition::{
    advanced_composition, advanced_composition_epsilon0, compose_all, compose_copies,
};
pub use conversions::{
    convert_neighbouring, pure_to_zcdp, rho_for_epsilon_delta, zcdp_delta, zcdp_epsilon,
};
pub use error::{CoreError, Result};
pub use exponential::{ExponentialMechanism, PermuteAndFlip, Selector};
pub use format::Num;
pub use ledger::{Ledger, Spend};
pub use loss::PrivacyLoss;
pub use neighbouring::Neighbouring;
pub use progress::{Progress, ProgressSink, StopRequest, check_stop, report_progress};
pub use rng::{StreamFamily, os_seeded_rng, seeded_rng, stream_rng};
pub use samplers::{
    DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, exact_rational, sample_bernoulli_exp,
    sample_bernoulli_exp_ratio, sample_bernoulli_two_over_e, sample_uniform_below,
};
