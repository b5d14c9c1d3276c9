//! # dp-local
//!
//! Local differential privacy for query release (seed 004 §5). Client and server are
//! separate modules that share only the messages:
//!
//! | module | side | what |
//! |---|---|---|
//! | [`client`] | client | [`LocalRandomizer`] (ε-LDP: any two inputs of one client); [`PointRelease`], the point release `W_x` of seed 004 Definition 5.5 with its constants derived (`b = tanh(ε/2)`, `c = √(π/2)/b`) so that `E[W_x] = x` and the e^ε ratio hold for every ε |
//! | [`client`] | client | [`SampledTableRelease`]: the point release of one uniformly drawn table of the record's encoding ([`client::encoding`]), unbiased after rescaling by `m·R`, with the dense release's per-coordinate variance |
//! | [`server`] | server | aggregators of messages: [`server::mean_point`], [`server::TableAggregate`] |
//! | [`protocol`] | both (simulation) | [`LocalProtocol`]: local projection, local coarse projection, local chaining (seed 004 Theorems 5.1 and 1.6), one client per record, in parallel, deterministic from a seed |
//!
//! The baselines (per-attribute randomized response, one table through k-ary RR / OLH /
//! Hadamard response, the Fourier approach of Cormode, Kulkarni, Srivastava 2018) are in
//! [`client::baselines`], [`server::baselines`] and [`protocol::baselines`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod client;
pub mod error;
pub mod protocol;
pub mod server;

pub use client::{
    LocalRandomizer, PointRelease, PointReleaseMessage, SampledTableRelease, TableEncoding,
    TableMessage,
};
pub use error::{LocalError, Result};
pub use protocol::{LocalMechanismKind, LocalProtocol, LocalRelease, LocalSettings};
