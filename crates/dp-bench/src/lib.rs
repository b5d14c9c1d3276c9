//! # dp-bench
//!
//! The user-facing layer: bundled datasets, experiment definitions and their runner, result
//! records, and the `dpqr` command-line program (`src/bin/dpqr.rs`). It contains no
//! algorithms: every mechanism comes from `dp-mechanisms`, every count from `dp-queries`.
//!
//! | module | what |
//! |---|---|
//! | [`datasets`] | the registry of bundled datasets (`adult`, `nltcs`) |
//! | [`registry`] | mechanisms by name; command-line budget flags → privacy loss |
//! | [`answers`] | the `marginal,cell,answer` CSV format, written and read back |
//! | [`experiments`] | benchmark grids, the runner, JSON-line result records, tables |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod answers;
pub mod datasets;
pub mod error;
pub mod experiments;
pub mod registry;

pub use error::{BenchError, Result, io_error};
