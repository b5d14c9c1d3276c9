//! # dp-bench
//!
//! The user-facing layer: bundled datasets, experiment definitions and their runner, result
//! records, and the `dpqr` command-line program (`src/bin/dpqr/`, one file per subcommand). It
//! contains no algorithms: every mechanism comes from `dp-mechanisms`, every count from
//! `dp-queries`.
//!
//! Its rooms:
//!
//! | room | what |
//! |---|---|
//! | `src/bin/dpqr/` | the `dpqr` program: one file per subcommand (`release.rs` with its dry run, `eval.rs`, `audit.rs`, `mechanisms.rs`, `ledger.rs`, `schema.rs`), the shared data flags in `data.rs` |
//! | [`pipeline`] | one release from a [`pipeline::ReleaseRequest`] (the arguments of `dpqr release` as plain data): validate every argument once → ledger check → count from the chosen source (memory, stream, engine) → charge and run → write the outputs |
//! | [`auto`] | `--mechanism auto`: a mechanism and its post-processing chosen from public inputs (workload class, budget kind) by the rule of docs/auto.md |
//! | [`catalogue`] | one entry per mechanism: description, guarantee, budgets, relations, limits, builder, audit settings |
//! | [`registry`] | mechanisms by name (through the catalogue); command-line budget flags → privacy loss |
//! | [`settings`] | mechanism settings given on the command line (`--rounds`, `--eta`, …): kinds, values, range checks |
//! | [`io`] | files: bundled [`io::datasets`], the [`io::answers`] and [`io::synthetic`] CSV formats, atomic writes ([`io::output`]), the budget ledger ([`io::ledger_file`]) |
//! | [`scoring`] | NON-PRIVATE scoring for `dpqr eval`: answers of weighted (synthetic) records, per-table errors, the uniform and all-zeros baselines, the error predicted from a release's noise |
//! | [`audit`] | empirical privacy audit: ε lower bounds from neighbouring runs, the canary; [`audit::stats`] (Clopper–Pearson) |
//! | [`experiments`] | benchmark grids, the runner, JSON-line result records, tables; the families' benches ([`experiments::iterative`], [`experiments::projection`], [`experiments::real`]) and, with the `plots` feature, PNG/SVG figures (`experiments::plots`) |
//!
//! **Features.** `plots` (off by default; `xtask` turns it on) pulls in plotters for the
//! figures, so that `cargo build -p dp-bench --bin dpqr` builds a `dpqr` that does not link it.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod audit;
pub mod auto;
pub mod catalogue;
pub mod error;
pub mod experiments;
pub mod io;
pub mod pipeline;
pub mod registry;
pub mod scoring;
pub mod settings;

pub use error::{BenchError, Result, io_error, quoted};
