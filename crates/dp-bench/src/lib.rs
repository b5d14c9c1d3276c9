//! # dp-bench
//!
//! The user-facing layer: bundled datasets, experiment definitions and their runner, result
//! records, and the `dpqr` command-line program (`src/bin/dpqr.rs`). It contains no
//! algorithms: every mechanism comes from `dp-mechanisms`, every count from `dp-queries`.
//!
//! | module | what |
//! |---|---|
//! | [`datasets`] | the registry of bundled datasets (`adult`, `nltcs`) |
//! | [`catalogue`] | one entry per mechanism: description, guarantee, budgets, relations, limits, builder, audit settings |
//! | [`registry`] | mechanisms by name (through the catalogue); command-line budget flags → privacy loss |
//! | [`answers`] | the `marginal,cell,answer` CSV format, written and read back |
//! | [`experiments`] | benchmark grids, the runner, JSON-line result records, tables |
//! | [`experiments_iterative`] | the iterative-family bench: DualQuery (seed 003 §7, scaled down), MWEM vs DualQuery |
//! | [`experiments_projection`] | the projection-family bench (seed 004) with packing lower bounds |
//! | [`audit`] | empirical privacy audit: ε lower bounds from neighbouring runs, the canary |
//! | [`ledger_file`] | the on-disk budget ledger: atomic writes, file lock, per-dataset totals |
//! | [`output`] | atomic file writes (temporary file + rename) and the up-front checks of output paths |
//! | [`plots`] | PNG/SVG line plots (plotters, vendored DejaVu Sans) for any experiment |
//! | [`synthetic`] | the synthetic-records CSV format (codes and weights) |
//! | [`stats`] | incomplete beta, Clopper–Pearson bounds (for the audit) |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod answers;
pub mod audit;
pub mod catalogue;
pub mod datasets;
pub mod error;
pub mod experiments;
pub mod experiments_iterative;
pub mod experiments_projection;
pub mod experiments_real;
pub mod ledger_file;
pub mod output;
pub mod plots;
pub mod registry;
pub mod stats;
pub mod synthetic;

pub use error::{BenchError, Result, io_error, quoted};
