//! # dp-local
//!
//! Local differential privacy for query release (seed 004 §5). Client and server are
//! separate modules that share only the messages:
//!
//! | module | side | what |
//! |---|---|---|
//! | [`client`] | client | [`LocalRandomizer`] (ε-LDP: any two inputs of one client); [`PointRelease`], the point release `W_x` of seed 004 Definition 5.5 with its constants derived (`b = tanh(ε/2)`, `c = √(π/2)/b`) so that `E[W_x] = x` and the e^ε ratio hold for every ε |
//! | [`server`] | server | aggregators of messages: [`server::mean_point`] |
//!
//! Still to come (issue #14): local projection, local coarse projection and local chaining
//! (seed 004 Theorems 5.1 and 1.6) on the server side, the frequency-oracle baselines, and
//! the privacy model in releases and the ledger.
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
pub use protocol::{
    LocalGuarantee, LocalMechanismKind, LocalProtocol, LocalRelease, LocalSettings,
};
